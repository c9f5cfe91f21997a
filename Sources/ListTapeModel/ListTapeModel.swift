// ListTapeModel module: sources arrive in the following commits.
