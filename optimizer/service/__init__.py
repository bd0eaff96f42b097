"""The gRPC service: catalog store, estimator and optimizer behind one server (docs/service.md).

Importing this package imports nothing from grpc: ``optimizer.service.jobs`` runs in the solver
worker processes, which must never load grpc (shared/reliability.md B1).
"""
