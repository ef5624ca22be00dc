"""Online evaluation: evaluation rules, trace sampling and the durable observation queue.

Observations (outputs a service produced) are queued durably by the server's Observe RPC;
a consumer in each server process takes them, applies the rules (`rules`) and scores the
sampled ones. Nothing here speaks gRPC: the server converts at its edge.
"""
