//go:build race

package main

// raceEnabled is true when the tests run with -race; the browser tests then
// build poise with -race too, reusing the compiled packages.
const raceEnabled = true
