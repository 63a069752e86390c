"""The project's tests (a regular package: an installed `tests` package, such as the one pyllusion ships, must not shadow it)."""
