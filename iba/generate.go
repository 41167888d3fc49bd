package iba

//go:generate go run ../internal/cmd/ibagen -dir . -docs ../docs/iba-structures.md
