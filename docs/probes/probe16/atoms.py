"""Sentences ("atoms") each naming one or two terms; a probe-16 text is a few atoms joined,
so a paper's terms move when its text picks other atoms."""
ATOMS = [
    "We use a graph neural network for link prediction.",
    "Retrieval augmented generation grounds the language model.",
    "Contrastive learning improves sentence embeddings.",
    "Knowledge distillation compresses the teacher model.",
    "Federated learning keeps patient data on site.",
    "A diffusion model generates the images.",
    "Reinforcement learning with sparse rewards is studied.",
    "Speculative decoding speeds up inference.",
    "We evaluate on the ImageNet dataset.",
    "Results are reported on the SQuAD benchmark.",
    "A convolutional neural network classifies x-ray images.",
    "Message passing networks predict molecular properties.",
    "Transfer learning adapts the pretrained encoder.",
    "We apply active learning to reduce labelling cost.",
]
