module probe

go 1.21
