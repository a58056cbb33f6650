// Package quickstart holds TestREADME, which runs the code blocks of the
// repository's README.md as a user pastes them, so that the quick starts
// cannot drift from what the commands do. It has its own package so that
// its time (it builds both binaries and runs every offline quick start)
// counts against a test binary of its own.
package quickstart
