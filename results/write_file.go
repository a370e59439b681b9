package results

// WriteFile writes data to path atomically, as WriteJSON does: a reader
// sees the old file or the whole new one, never a part.
func WriteFile(path string, data []byte) error { return writeAtomic(path, data) }
