// Placeholder: filled in by the next commit.
