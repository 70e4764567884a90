package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	0.5601127003, -0.07945861354, 0.5600174013, 3.643451527,
	2.216866896, 1.534975175, 0.6020990702, 0.4121847012,
	0.5261688352, -0.5708177291, -2.13019752, -0.3286568698,
	0.2643933513, 0.1339909406, 0.3824197993, 0.1510523365,
	0.7244747775, 2.153534329, 1.342922496,
}

// verifierCut is the least log-odds of a hit (a probability of 0.69).
const verifierCut = 0.8136897506
