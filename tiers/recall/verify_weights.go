package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	-0.3298950992, -0.5002355811, 0.5372057134, 3.68514017,
	5.412787037, 1.38848923, 0.7930293067, 0.323323396,
	0.5288118106, -1.079671456, -2.021617752, 1.255851075,
	0.1938832373, 0.1477396394, 0.2137078577, 0.1402794509,
	0.8130259494,
}

// verifierCut is the least log-odds of a hit (a probability of 0.71).
const verifierCut = 0.917569707
