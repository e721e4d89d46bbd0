"""Short hand-written abstracts for probe 15."""
H = [
    "We train a graph neural network (GNN) to predict citation links between papers.",
    "Retrieval augmented generation (RAG) grounds a language model in a document index.",
    "A convolutional neural network classifies chest x-ray images into pneumonia classes.",
    "We study reinforcement learning with sparse rewards in robotic grasping tasks.",
    "Contrastive learning of sentence embeddings improves semantic textual similarity.",
    "A transformer language model is distilled into a smaller student for mobile inference.",
    "Graph neural networks and message passing for molecular property prediction.",
    "We benchmark retrieval augmented generation on open-domain question answering.",
    "Federated learning trains a shared model across hospitals without sharing patient data.",
    "Speculative decoding speeds up transformer inference with a small draft model.",
    "Knowledge distillation compresses convolutional neural networks for edge devices.",
    "Diffusion models generate images by reversing a gradual noising process.",
]
