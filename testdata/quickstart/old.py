"""Greetings, the file the README's patch engine quick start edits."""


def greet(name):
    print("hello", name)


def farewell(name):
    print("bye", name)


def shout(name):
    print(name.upper())


def whisper(name):
    print(name.lower())
