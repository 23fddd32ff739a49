"""Find and read a checkout's files: which files a scan reads, the scan's settings, sources decoded as Python does."""
