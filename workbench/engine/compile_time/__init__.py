"""Compile time: where one real compile of a call goes (``%%jaxprof --compile``)."""
