"""The words: data types, errors, the benchmark base class, the registry, parameters and item selection."""
