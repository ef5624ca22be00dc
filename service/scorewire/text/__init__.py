"""Text machinery for the text-metric checks: tokenisers (`units`), the vocabularies and
language models that ship in packages (`resources`), and the embeddings client
(`embeddings`). Imports only `scorewire.core` (and settings for the client's options).
"""
