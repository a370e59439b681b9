package atomicfile

import "io"

// Func makes a function that writes to w the io.WriterTo WriteFrom
// takes, counting the bytes it writes: a page or a chart rendered
// straight into the temporary file.
type Func func(w io.Writer) error

// WriteTo calls f on w.
func (f Func) WriteTo(w io.Writer) (int64, error) {
	cw := &counter{w: w}
	err := f(cw)
	return cw.n, err
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
