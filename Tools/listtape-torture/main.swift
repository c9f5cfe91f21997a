print("torture: todo")
