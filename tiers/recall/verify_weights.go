package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	0.5535779694, 0.02714516589, 0.5866579467, 3.491955926,
	2.544367671, 1.80021493, 0.5708994798, 0.4039155967,
	0.5758090865, -0.8492367701, -2.072290794, -0.5421095145,
	0.06558632634, 0.04321068374, 0.3158923555, 0.1831938858,
	0.8725974329, 2.436778447, 1.645099354,
}

// verifierCut is the least log-odds of a hit (a probability of 0.73).
const verifierCut = 1.013428745
