import Forum
