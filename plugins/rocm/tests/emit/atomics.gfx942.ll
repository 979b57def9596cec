; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @atomics(ptr addrspace(1) %p0, ptr addrspace(1) %p1, ptr addrspace(1) %p2, ptr addrspace(1) %p3, i32 %p4) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 64}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca float, addrspace(5)
  store float 0.0, ptr addrspace(5) %r0
  %r1 = alloca half, addrspace(5)
  store half 0.0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %r3 = alloca i1, addrspace(5)
  store i1 false, ptr addrspace(5) %r3
  %v0 = sitofp i32 %tid to float
  %v1 = fmul float %v0, 0x3FE0000000000000
  store float %v1, ptr addrspace(5) %r0
  %v2 = icmp slt i32 %tid, %p4
  br i1 %v2, label %do0, label %done1
do0:
  %v3 = load float, ptr addrspace(5) %r0
  %v4 = sdiv i32 %tid, 4
  %v5 = srem i32 %tid, 4
  %v6 = icmp ne i32 %v5, 0
  %v7 = xor i32 %v5, 4
  %v8 = icmp slt i32 %v7, 0
  %v9 = and i1 %v6, %v8
  %v10 = select i1 %v9, i32 4, i32 0
  %v11 = add i32 %v5, %v10
  %v12 = sext i32 %v11 to i64
  %v13 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v12
  %v14 = atomicrmw fadd ptr addrspace(1) %v13, float %v3 syncscope("agent") monotonic, align 4
  br label %done1
done1:
  %v15 = load float, ptr addrspace(5) %r0
  %v16 = fptrunc float %v15 to half
  store half %v16, ptr addrspace(5) %r1
  %v17 = load half, ptr addrspace(5) %r1
  %v18 = sdiv i32 %tid, 4
  %v19 = srem i32 %tid, 4
  %v20 = icmp ne i32 %v19, 0
  %v21 = xor i32 %v19, 4
  %v22 = icmp slt i32 %v21, 0
  %v23 = and i1 %v20, %v22
  %v24 = select i1 %v23, i32 4, i32 0
  %v25 = add i32 %v19, %v24
  %v26 = sext i32 %v25 to i64
  %v27 = getelementptr inbounds half, ptr addrspace(1) %p1, i64 %v26
  %v28 = atomicrmw fadd ptr addrspace(1) %v27, half %v17 syncscope("agent") monotonic, align 2
  %v29 = call i32 @tilec.ipow.s.i32(i32 %tid, i32 3)
  store i32 %v29, ptr addrspace(5) %r2
  %v30 = load i32, ptr addrspace(5) %r2
  %v31 = sdiv i32 %v30, 2
  %v32 = srem i32 %v30, 2
  %v33 = icmp ne i32 %v32, 0
  %v34 = xor i32 %v32, 2
  %v35 = icmp slt i32 %v34, 0
  %v36 = and i1 %v33, %v35
  %v37 = select i1 %v36, i32 2, i32 0
  %v38 = add i32 %v32, %v37
  %v39 = icmp ne i32 %v38, 0
  store i1 %v39, ptr addrspace(5) %r3
  %v40 = load i32, ptr addrspace(5) %r2
  %v41 = load i1, ptr addrspace(5) %r3
  %v42 = zext i1 %v41 to i32
  %v43 = add i32 %v40, %v42
  store i32 %v43, ptr addrspace(5) %r2
  %v44 = load i32, ptr addrspace(5) %r2
  %v45 = getelementptr inbounds i32, ptr addrspace(1) %p2, i64 0
  %v46 = atomicrmw add ptr addrspace(1) %v45, i32 %v44 syncscope("agent") monotonic, align 4
  %v47 = load half, ptr addrspace(5) %r1
  %v48 = bitcast half %v47 to i16
  %v49 = zext i16 %v48 to i32
  %v50 = and i32 %lane, -16
  %v51 = add i32 %lane, 1
  %v52 = icmp sge i32 %v51, %v50
  %v53 = add i32 %v50, 16
  %v54 = icmp slt i32 %v51, %v53
  %v55 = and i1 %v52, %v54
  %v56 = select i1 %v55, i32 %v51, i32 %lane
  %v57 = shl i32 %v56, 2
  %v58 = call i32 @llvm.amdgcn.ds.bpermute(i32 %v57, i32 %v49)
  %v59 = trunc i32 %v58 to i16
  %v60 = bitcast i16 %v59 to half
  store half %v60, ptr addrspace(5) %r1
  %v61 = load half, ptr addrspace(5) %r1
  %v62 = sext i32 %tid to i64
  %v63 = getelementptr inbounds half, ptr addrspace(1) %p3, i64 %v62
  store half %v61, ptr addrspace(1) %v63, align 2
  ret void
}

define internal i32 @tilec.ipow.s.i32(i32 %x, i32 %y) #1 {
entry:
  %neg = icmp slt i32 %y, 0
  br i1 %neg, label %negative, label %loop
negative:
  %is1 = icmp eq i32 %x, 1
  %ism1 = icmp eq i32 %x, -1
  %odd = and i32 %y, 1
  %isodd = icmp ne i32 %odd, 0
  %m1 = select i1 %isodd, i32 -1, i32 1
  %r0 = select i1 %ism1, i32 %m1, i32 0
  %r1 = select i1 %is1, i32 1, i32 %r0
  ret i32 %r1
loop:
  %base = phi i32 [ %x, %entry ], [ %base2, %step ]
  %exp = phi i32 [ %y, %entry ], [ %exp2, %step ]
  %acc = phi i32 [ 1, %entry ], [ %acc2, %step ]
  %done = icmp eq i32 %exp, 0
  br i1 %done, label %exit, label %step
step:
  %bit = and i32 %exp, 1
  %set = icmp ne i32 %bit, 0
  %mul = mul i32 %acc, %base
  %acc2 = select i1 %set, i32 %mul, i32 %acc
  %base2 = mul i32 %base, %base
  %exp2 = lshr i32 %exp, 1
  br label %loop
exit:
  ret i32 %acc
}

declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { alwaysinline nounwind "target-cpu"="gfx942" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
