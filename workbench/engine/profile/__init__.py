"""Measured device time: the profiler behind ``%%jaxprof`` and ``workbench.profile``."""
