"""A software-engineering environment that reports failures of its own as swe_env:<kind>."""
