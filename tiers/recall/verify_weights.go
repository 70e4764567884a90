package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	-0.330791697, -0.5076936784, 0.5295003446, 3.693482195,
	5.416382667, 1.372882096, 0.798904053, 0.3138308956,
	0.5227980107, -1.079005882, -2.022010612, 1.240291044,
	0.2012664714, 0.1358715876, 0.231633178, 0.1423171652,
	0.8135921093,
}

// verifierCut is the least log-odds of a hit (a probability of 0.72).
const verifierCut = 0.9283561487
