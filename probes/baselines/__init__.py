"""Answerers that need the item: chance over its answers, pixels by geometry."""
