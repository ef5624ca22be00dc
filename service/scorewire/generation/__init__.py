"""Producing outputs to score: prompt templates, model providers, HTTP and recorded
targets, and the jobs that produce then score each case (`jobs`). Sits above the engine
(it scores what it produces) and below the suite formats, which describe its jobs.
"""
