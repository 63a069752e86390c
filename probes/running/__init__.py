"""Running: answerers, the async runner (progress and stopping), the store, limits, imports."""
