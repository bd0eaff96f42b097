"""The training-time estimator: collectives, fabrics, clusters, parallel plans and the planner."""
