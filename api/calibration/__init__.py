"""Skill calibration: reference skills recorded against Src, run under every condition."""
