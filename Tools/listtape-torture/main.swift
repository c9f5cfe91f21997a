print("torture: not yet")
