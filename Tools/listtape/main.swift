print("listtape: not yet")
