"""People as answerers: a person's answer to an item, graded like a model's reply."""
