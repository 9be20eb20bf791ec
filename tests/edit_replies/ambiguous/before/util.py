def a():
    x = load()
    return x


def b():
    x = load()
    return x
