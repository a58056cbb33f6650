"""Greetings, the file the README's patch engine quick start edits."""


def greet(name, greeting="Hello"):
    print(f"{greeting}, {name}!")


def farewell(name):
    print("bye", name)


def shout(name):
    print(name.upper())


def whisper(name):
    print(name.lower() + "...")
