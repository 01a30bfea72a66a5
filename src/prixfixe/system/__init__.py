"""What the server says about itself: the capability index, health and the doctor report."""
