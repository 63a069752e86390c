"""A clock a test sets by hand (`clock.now += 60`), for code that takes one (`clock=`)."""


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
