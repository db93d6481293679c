# Train a small Transformer encoder to reverse sequences, with FLOATER position encodings computed
# by posenc (forward table and exact discrete gradient in C++, one autograd node).
import torch
from torch import nn

import posenc

torch.manual_seed(0)
V, L, D, LAYERS = 8, 12, 32, 2


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.out = nn.Embedding(V, D), nn.Linear(D, V)
        self.pos = posenc.FloaterEncoder(D, hidden=D, blocks=(LAYERS,), delta=0.1)  # proj_bias [LAYERS, D]
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(D, 4, 4 * D, dropout=0.0, batch_first=True)
                                    for _ in range(LAYERS))

    def forward(self, tokens):
        P = self.pos(tokens.shape[1])  # [L, LAYERS, D]: one FLOATER trajectory per layer, shared dynamics
        x = self.emb(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x + P[:, i])  # position added at the input of every layer (paper eq. 10)
        return self.out(x)


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(301):
    x = torch.randint(0, V, (32, L))
    loss = nn.functional.cross_entropy(model(x).reshape(-1, V), x.flip(1).reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(f"step {step:3d}  loss {loss.item():.3f}")
