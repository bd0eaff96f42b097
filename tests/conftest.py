"""Suite-wide settings. Hypothesis examples run without a wall-clock deadline: on CI's shared
two cores one example can take ten times what it takes on a quiet machine (a 200 ms deadline
failed a 25 ms example that way), and speed is measured in benchmarks/, never asserted here."""

from hypothesis import settings

settings.register_profile("suite", deadline=None)
settings.load_profile("suite")
