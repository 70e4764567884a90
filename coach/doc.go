// Package coach is Poise's L4 "coach mode": static, dependency-free answer
// scaffolds (question or statement, think countdown, STAR / CARL frame,
// tips) driven by the data in scripts.json, which browsers also run offline.
package coach
