package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	0.4678842213, -0.07822700302, 0.526755892, 3.643706435,
	2.301656078, 1.486838662, 0.6124776847, 0.4350498027,
	0.5243592026, -0.6078098193, -2.036077601, -0.290320452,
	0.2127698468, 0.08652845258, 0.3833112095, 0.09611380882,
	0.7261064019, 2.115815103, 1.140211565,
}

// verifierCut is the least log-odds of a hit (a probability of 0.70).
const verifierCut = 0.8659033923
