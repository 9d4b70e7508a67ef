"""The hw room: the hardware build pack's drawings, its engineering checks (spacing, cable reach,
currents, decoders, BOM, pins) and the KiCad exports.
"""
