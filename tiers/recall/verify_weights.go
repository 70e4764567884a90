package recall

// verifierWeights are the verifier's weights, in the order of inputs'
// vector, as TestVerifierWeights fits them on the dev halves.
var verifierWeights = [nInputs]float64{
	0.5031409513, -0.101535201, 0.5276379894, 3.566644747,
	2.373788054, 1.48177526, 0.6318573667, 0.4092955815,
	0.5026956445, -0.6364992928, -2.06647588, -0.2343832013,
	0.2323449336, 0.1289976878, 0.4236289568, 0.1394697636,
	0.5926468404, 2.13931748, 1.142958243,
}

// verifierCut is the least log-odds of a hit (a probability of 0.7).
const verifierCut = 0.8453177731
