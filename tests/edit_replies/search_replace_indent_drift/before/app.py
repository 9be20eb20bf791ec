"""A tiny inventory."""

import json


class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count=1):
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name, count=1):
        left = self.items.get(name, 0) - count
        if left <= 0:
            self.items.pop(name, None)
        else:
            self.items[name] = left

    def total(self):
        return sum(self.items.values())

    def save(self, path):
        with open(path, "w") as handle:
            json.dump(self.items, handle)
