package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	0.5536461227, 0.02714794016, 0.5866340703, 3.491957228,
	2.544318794, 1.800201355, 0.5709095598, 0.4039010297,
	0.5757924473, -0.8493971487, -2.072201495, -0.5421733188,
	0.06545518314, 0.04319336688, 0.3158989944, 0.1831794001,
	0.8726339153, 2.436752938, 1.64534597,
}

// verifierCut is the least log-odds of a hit (a probability of 0.73).
const verifierCut = 1.01343547
