"""capabilities"""
