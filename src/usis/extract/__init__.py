"""Extract stage: one module per model (`usis.extract.<model>`) reads the pinned sources into raw records; the build imports them by name."""
