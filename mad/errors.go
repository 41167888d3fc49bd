package mad

import "errors"

// ErrClosed is returned by a Transport or Client used after Close.
var ErrClosed = errors.New("mad: transport closed")
