from app import Inventory


def test_add():
    inventory = Inventory()
    inventory.add("pen", 2)
    assert inventory.total() == 2
