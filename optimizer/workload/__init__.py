"""Workloads: transformer architectures, how they are trained, their FLOPs and memory."""
