"""roles"""
