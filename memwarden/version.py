"""The package's version, apart from memwarden/__init__.py so that any module can name it
without importing the package's public API."""

__version__ = "0.1.0"
