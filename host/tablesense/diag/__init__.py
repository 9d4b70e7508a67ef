"""The diag room: board self-tests, sweeps, heatmaps, tag enrolment and the diagnostics page.
"""
